"""Which canned reply answers a text ()."""

import pytest

from canned_replies import services
from canned_replies.matching import ReplyIndex, find_reply, normalize

pytestmark = pytest.mark.django_db


def reply(org, trigger, criteria="contains", text="answer"):
    return services.create_canned_reply(
        organization=org, name=trigger, trigger=trigger, match_criteria=criteria, response=text
    )


def test_normalisation():
    assert normalize("  Hello \t  WORLD\n ") == "hello world"
    assert normalize("STRASSE") == normalize("straße")


@pytest.mark.parametrize(
    "criteria, text, matches",
    [
        ("contains", "well hello there", True),
        ("contains", "hell", False),
        ("exact match", "  HELLO  ", True),
        ("exact match", "hello there", False),
        ("starts with", "Hello there", True),
        ("starts with", "oh hello", False),
        ("ends with", "oh   hello", True),
        ("ends with", "hello there", False),
    ],
)
def test_each_criterion(org_a, criteria, text, matches):
    answer = reply(org_a, "hello", criteria)
    assert find_reply(organization=org_a, text=text) == (answer if matches else None)


def test_exact_match_beats_a_longer_contains(org_a):
    reply(org_a, "price list please", "contains")
    exact = reply(org_a, "price list", "exact match")
    assert find_reply(organization=org_a, text="Price  List") == exact


def test_longest_trigger_wins_among_the_rest(org_a):
    reply(org_a, "price", "contains")
    longest = reply(org_a, "price list", "starts with")
    reply(org_a, "list", "ends with")
    assert find_reply(organization=org_a, text="price list") == longest


def test_ties_go_to_the_oldest(org_a):
    oldest = reply(org_a, "hours", "ends with")
    reply(org_a, "hours", "contains")
    assert find_reply(organization=org_a, text="our hours") == oldest
    longer = reply(org_a, "opening", "contains")
    assert find_reply(organization=org_a, text="opening hours") == longer


def test_trigger_whitespace_and_case_are_normalised(org_a):
    answer = reply(org_a, "  Opening   HOURS ", "contains")
    assert find_reply(organization=org_a, text="what are your opening hours?") == answer


def test_deleted_replies_never_match(org_a):
    gone = reply(org_a, "hello")
    services.delete_canned_reply(reply=gone)
    assert find_reply(organization=org_a, text="hello") is None


def test_edits_are_seen_at_once(org_a):
    answer = reply(org_a, "hello")
    assert find_reply(organization=org_a, text="hello") == answer
    services.update_canned_reply(reply=answer, changes={"trigger": "bonjour"})
    assert find_reply(organization=org_a, text="hello") is None
    assert find_reply(organization=org_a, text="bonjour") == answer


def test_another_organizations_replies_are_never_used(org_a, org_b):
    reply(org_b, "hello")
    assert find_reply(organization=org_a, text="hello") is None


def test_no_match_and_empty_text(org_a):
    reply(org_a, "hello")
    assert find_reply(organization=org_a, text="goodbye") is None
    assert find_reply(organization=org_a, text="   ") is None


def test_a_cached_index_costs_no_query_per_message(org_a, django_assert_num_queries):
    for n in range(50):
        reply(org_a, f"trigger {n}", text=f"answer {n}")
    find_reply(organization=org_a, text="warm up")
    with django_assert_num_queries(0):  # a match included: the reply comes with the index
        for _ in range(10):
            assert find_reply(organization=org_a, text="nothing here") is None
            assert (
                find_reply(organization=org_a, text="about trigger 42").response_text == "answer 42"
            )


def brute_force(rows, text):
    """The rules written the slow, obvious way, to check the index against."""
    message = normalize(text)
    if not message:
        return None
    exact = [i for i, t, c in rows if c == "exact match" and normalize(t) == message]
    if exact:
        return min(exact)
    tests = {
        "contains": lambda t: t in message,
        "starts with": message.startswith,
        "ends with": message.endswith,
    }
    found = [
        (-len(normalize(t)), i)
        for i, t, c in rows
        if c in tests and normalize(t) and tests[c](normalize(t))
    ]
    return min(found)[1] if found else None


def test_index_agrees_with_the_rules_on_random_data():
    import random

    rng = random.Random(7)
    words = ["a", "ab", "abc", "hello", "hi", "price", "list", "open", "x y", "hours"]
    criteria = ["contains", "exact match", "starts with", "ends with"]
    for _ in range(200):
        rows = [
            (i, " ".join(rng.sample(words, rng.randint(1, 2))), rng.choice(criteria))
            for i in range(1, rng.randint(2, 30))
        ]
        index = ReplyIndex.build(rows)
        for _ in range(20):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 40)))
            assert index.match(text) == brute_force(rows, text), (rows, text)
