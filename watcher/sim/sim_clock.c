#include "sim_clock.h"

#include <sys/time.h>
#include <uv.h>

int64_t sim_clock_now_us(void) {
  return (int64_t)(uv_hrtime() / 1000);
}

int64_t sim_clock_wall_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}
