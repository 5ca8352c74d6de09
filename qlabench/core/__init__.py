"""The data model: points, suites, result rows, model catalogue, FLOP model, errors.

Pure Python. Importing anything here loads neither torch nor pandas (tests/test_layers.py holds it),
so storing, comparing and plotting results works on any machine.
"""
