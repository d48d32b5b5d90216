/* placeholder until the MCP core lands */
#include <stdio.h>
int main(void) { return 0; }
