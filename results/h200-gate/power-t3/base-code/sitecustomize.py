import os
os.environ['QLABENCH_SYNTHETIC_SLOWDOWN'] = '1.0'
