tri check tests/golden/verify_fail/ew_scalar_times_block.tri
