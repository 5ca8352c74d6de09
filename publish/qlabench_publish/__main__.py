"""`python -m qlabench_publish`: this repository's publishing commands (cli/)."""

from qlabench_publish.cli import main

main()
