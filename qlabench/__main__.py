from qlabench.cli.main import main

main()
