/* Runs the validator's Check suite (tests/unit/test_validator.c) on its own. */
#include <stdlib.h>

#include <check.h>

Suite *validator_suite(void);

int
main(void)
{
	SRunner *sr = srunner_create(validator_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
