"""A sender's ceiling (campaigns/sender.py, `Ceiling`): the campaign's rate while its
sends keep their turns, cut when more than a twentieth of them miss, raised again a
tenth of the rate a second while they do not, and never changed twice in one second."""

from pytest import approx

from campaigns.sender import Ceiling


def test_a_sender_whose_sends_keep_their_turns_claims_at_the_rate():
    ceiling = Ceiling(500)
    for second in range(5):
        ceiling.follow(float(second), answered=500 * second, missed=second)  # 0.2%
    assert ceiling.per_second == 500
    ceiling.claimed(10.0, 50)
    assert not ceiling.may_claim(10.09) and ceiling.may_claim(10.1)  # 50 at 500 a second


def test_sends_that_miss_their_turns_cut_it_at_most_once_a_second():
    ceiling = Ceiling(500)
    ceiling.follow(0.0, answered=100, missed=10)
    assert ceiling.per_second == approx(500 * 2 / 3)
    ceiling.follow(0.5, answered=200, missed=60)  # within the second: not again
    assert ceiling.per_second == approx(500 * 2 / 3)
    ceiling.follow(1.0, answered=300, missed=80)  # 70 of 200 since the cut
    assert ceiling.per_second == approx(500 * 4 / 9)
    ceiling.claimed(2.0, 50)
    assert not ceiling.may_claim(2.2) and ceiling.may_claim(2.23)


def test_it_comes_back_to_the_rate_a_tenth_a_second_once_they_keep_them():
    ceiling = Ceiling(300)
    ceiling.follow(0.0, answered=100, missed=50)
    assert ceiling.per_second == approx(200)
    rates = []
    for second in range(1, 5):
        ceiling.follow(float(second), answered=100 + 200 * second, missed=50)
        rates.append(ceiling.per_second)
    assert rates == approx([230, 260, 290, 300])


def test_it_never_goes_below_one_a_second():
    ceiling = Ceiling(2)
    for second in range(10):
        ceiling.follow(float(second), answered=second + 1, missed=second + 1)
    assert ceiling.per_second == 1.0
