/* SPDX-License-Identifier: MIT */
/* The end of every unit test program: run the suite, exit 0 only if no check failed. */
#pragma once

#include <check.h>
#include <stdlib.h>

static inline int check_run(Suite *s)
{
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
