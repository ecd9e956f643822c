tri check tests/golden/verify_fail/broadcast_rank.tri
