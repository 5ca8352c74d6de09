from qlabench.cli import main

main()
