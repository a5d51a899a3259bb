/*
 * The zlib peer of bench/bench_codecs.sh: inflates IN to OUT with the zlib
 * library directly, 256 KiB buffers, read(2)/write(2), as a plain C
 * program would. Accepts a stream that was sync-flushed and never finished
 * (inflate then stops for want of input), like a compressed+condensed VPP.
 *   zlib_inflate_peer IN OUT
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#define BUF (256 * 1024)

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: zlib_inflate_peer IN OUT\n");
        return 2;
    }
    int in = open(argv[1], O_RDONLY), out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) {
        perror("open");
        return 1;
    }
    static unsigned char ib[BUF], ob[BUF];
    z_stream z = {0};
    if (inflateInit(&z) != Z_OK)
        return 1;
    int r = Z_OK;
    ssize_t got;
    while (r != Z_STREAM_END && (got = read(in, ib, BUF)) > 0) {
        z.next_in = ib;
        z.avail_in = (uInt)got;
        do {
            z.next_out = ob;
            z.avail_out = BUF;
            r = inflate(&z, Z_NO_FLUSH);
            if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
                fprintf(stderr, "inflate: %d\n", r);
                return 1;
            }
            if (write(out, ob, BUF - z.avail_out) != (ssize_t)(BUF - z.avail_out)) {
                perror("write");
                return 1;
            }
        } while (z.avail_out == 0);
    }
    inflateEnd(&z);
    return close(out) == 0 ? 0 : 1;
}
