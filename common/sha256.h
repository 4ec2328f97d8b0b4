/* common/sha256.h: SHA-256 (FIPS 180-4), for sweep hashes, system fingerprints and run ids. */
#ifndef BENCHDB_SHA256_H
#define BENCHDB_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t state[8];
	uint64_t bytes;
	unsigned char block[64];
	size_t fill;
};

void sha256_init(struct sha256 *h);
void sha256_update(struct sha256 *h, const void *data, size_t n);
void sha256_final(struct sha256 *h, unsigned char digest[32]);
/* Hex digest (64 chars + NUL) of data. */
void sha256_hex(const void *data, size_t n, char out[65]);

#endif
