"""CI's production step (devtools/production.py) runs the README's production install
itself: every command of the README's block is run or skipped for a stated reason, a
command it does not know fails the step, and what holds the commands together is
checked before anything runs (the settings name the role and database the README makes,
certbot's renewals reload nginx, the password prompt comes last), and docs/operations.md
writes PgBouncer's users file as CI's PgBouncer does. The step's run itself is
.ci/run's ("the production install")."""

import re
import subprocess

import pytest

from devtools.pgbouncer import auth_line
from devtools.production import README, ROOT, StepFailed, plan, readme_commands


def readme_with(tmp_path, old: str, new: str):
    text = README.read_text()
    assert old in text
    path = tmp_path / "README.md"
    path.write_text(text.replace(old, new))
    return path


def test_every_command_is_run_or_skipped_for_a_reason():
    steps = plan(readme_commands())

    ran = [step for step in steps if step.kind != "skip"]
    assert [step.kind for step in ran] == [
        "password",
        "postgres",  # the role
        "postgres",  # its database
        "write_env_file",
        "sourced",  # migrate, collectstatic, check --deploy
        "write_site",  # bootstrap.conf
        "nginx_test",
        "write_site",  # messaging.conf
        "nginx_test",
        "sourced",  # createsuperuser
    ]
    assert "check --deploy --fail-level WARNING)" in ran[4].command
    assert all(step.why for step in steps if step.kind == "skip")


def test_a_continued_line_is_one_command_as_a_shell_reads_it():
    [write] = [command for command in readme_commands() if "write_env_file" in command]

    assert write.count("\\\n") == 2
    assert "--redis-url redis://127.0.0.1:6379/0" in write


def test_a_command_the_step_does_not_know_fails_it(tmp_path):
    readme = readme_with(
        tmp_path,
        "install -d -o messaging",
        "chown -R messaging /srv/messaging\ninstall -d -o messaging",
    )

    with pytest.raises(StepFailed, match="does not know"):
        plan(readme_commands(readme))


def test_the_settings_must_name_the_role_and_database_the_readme_makes(tmp_path):
    readme = readme_with(tmp_path, '5432/messaging"', '5432/other"')

    with pytest.raises(StepFailed, match="does not name the role"):
        plan(readme_commands(readme))


def test_certbot_renewals_must_reload_nginx(tmp_path):
    readme = readme_with(tmp_path, ' \\\n  --deploy-hook "systemctl reload nginx"', "")

    with pytest.raises(StepFailed, match="would not reload nginx"):
        plan(readme_commands(readme))


def test_certbot_writes_the_challenge_where_the_sites_serve_it(tmp_path):
    readme = readme_with(tmp_path, "--webroot -w /var/www/html", "--webroot -w /var/www/acme")

    with pytest.raises(StepFailed, match="webroot"):
        plan(readme_commands(readme))


def test_the_password_prompt_is_the_last_command():
    # Pasted into a terminal, the lines after a prompt would be read as its answer.
    commands = readme_commands()
    prompting = [command for command in commands if "createsuperuser" in command]

    assert prompting == commands[-1:]


def test_the_pgbouncer_users_file_of_the_docs_is_the_one_ci_writes():
    # docs/operations.md's commands install deploy/pgbouncer.ini and write the users file
    # it names; CI's PgBouncer (devtools/pgbouncer.py) writes its own the same way.
    text = (ROOT / "docs" / "operations.md").read_text().split("## PgBouncer", 1)[1]
    block = re.search(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL).group(1)
    ini = (ROOT / "deploy" / "pgbouncer.ini").read_text()
    users_file = re.search(r"^auth_file = (\S+)$", ini, re.MULTILINE).group(1)
    assert "deploy/pgbouncer.ini /etc/pgbouncer/pgbouncer.ini" in block
    [printf] = [line for line in block.splitlines() if line.startswith("printf ")]
    assert printf.endswith(f"> {users_file}")

    password = "0a1b2c3d"
    written = subprocess.run(
        ["bash", "-c", printf.removesuffix(f"> {users_file}")],
        env={"DB_PASSWORD": password},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert written == auth_line("messaging", password)
