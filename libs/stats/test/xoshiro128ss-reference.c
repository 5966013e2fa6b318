/*
 * Reference output for libs/stats rng.test.ts: SplitMix64 seeding + xoshiro128**, transcribed from
 * the authors' public-domain reference code (Vigna, splitmix64.c; Blackman & Vigna,
 * xoshiro128starstar.c). Build and run: cc -O2 -o /tmp/xo xoshiro128ss-reference.c && /tmp/xo
 */
#include <stdint.h>
#include <stdio.h>

static uint64_t sm;
static uint64_t splitmix64(void) {
  uint64_t z = (sm += 0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

static inline uint32_t rotl(const uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }
static uint32_t s[4];
static uint32_t next(void) {
  const uint32_t result = rotl(s[1] * 5, 7) * 9;
  const uint32_t t = s[1] << 9;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 11);
  return result;
}

static void seed(uint64_t seed) {
  sm = seed;
  uint64_t a = splitmix64(), b = splitmix64();
  s[0] = (uint32_t)a; s[1] = (uint32_t)(a >> 32); s[2] = (uint32_t)b; s[3] = (uint32_t)(b >> 32);
}

int main(void) {
  const uint64_t seeds[] = {0, 1, 42, 9007199254740991ULL};
  for (int i = 0; i < 4; i++) {
    seed(seeds[i]);
    printf("%llu:", (unsigned long long)seeds[i]);
    for (int j = 0; j < 8; j++) printf(" %u", next());
    /* a 53-bit double as genrand_res53: (a>>5)*2^26 + (b>>6), / 2^53 */
    uint32_t a = next() >> 5, b = next() >> 6;
    printf(" | %.17g\n", (a * 67108864.0 + b) / 9007199254740992.0);
  }
  return 0;
}
