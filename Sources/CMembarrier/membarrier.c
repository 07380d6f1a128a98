#include "CMembarrier.h"
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

int aq_membarrier_register(void) {
    long commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0);
    if (commands < 0 || !(commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return -1;
    return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0 ? 0 : -1;
}

int aq_membarrier(void) {
    return (int)syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
}
