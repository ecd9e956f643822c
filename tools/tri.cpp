// Placeholder entry point replaced by the tool's implementation.
#include <stdio.h>
#include "tri/tri.h"
int main(void) { printf("tri %u\n", tri_version()); return 0; }
