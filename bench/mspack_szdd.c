/*
 * bench_mspack_szdd IN OUT: expands the SZDD file IN into OUT with libmspack,
 * the reference that bench/bench_szdd.sh times trowel's decoder against.
 * It uses libmspack's own file I/O (no custom callbacks), as its users would.
 */
#include <mspack.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_mspack_szdd IN OUT\n");
        return 2;
    }
    int err = 0;
    MSPACK_SYS_SELFTEST(err);
    if (err) {
        fprintf(stderr, "libmspack self-test failed (%d)\n", err);
        return 1;
    }
    struct msszdd_decompressor *d = mspack_create_szdd_decompressor(NULL);
    if (!d) {
        fprintf(stderr, "cannot create the libmspack SZDD decompressor\n");
        return 1;
    }
    struct msszddd_header *h = d->open(d, argv[1]);
    if (!h) {
        fprintf(stderr, "%s: not an SZDD file libmspack can open (error %d)\n", argv[1],
                d->last_error(d));
        mspack_destroy_szdd_decompressor(d);
        return 1;
    }
    int rc = d->extract(d, h, argv[2]);
    d->close(d, h);
    mspack_destroy_szdd_decompressor(d);
    if (rc != MSPACK_ERR_OK) {
        fprintf(stderr, "%s: libmspack failed to expand (error %d)\n", argv[1], rc);
        return 1;
    }
    return 0;
}
