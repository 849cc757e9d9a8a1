from tauk.cli import run

run()
