from citelens.cli.main import run

run()
