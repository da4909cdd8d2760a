#!/usr/bin/python3
"""xwd_to_png.py IN.xwd OUT.png: a screen dump from `xwd -root` (24 or 32 bits per pixel, TrueColor,
as Xvfb makes them) written as an RGB PNG, with the standard library only."""
import struct
import sys
import zlib


def channel(pixel, mask):
    shift = (mask & -mask).bit_length() - 1
    return (pixel & mask) >> shift


def read_xwd(src):
    """The dump's width, height and rows, each row width RGB triples as bytes."""
    data = open(src, "rb").read()
    fields = struct.unpack(">25I", data[:100])
    header_size, version = fields[0], fields[1]
    width, height, byte_order, bits_per_pixel, bytes_per_line = fields[4], fields[5], fields[7], fields[11], fields[12]
    red_mask, green_mask, blue_mask, ncolors = fields[14], fields[15], fields[16], fields[19]
    # xwd writes 24 bits a pixel for a root window some visuals leave it (after a window on it
    # was resized, here), 32 otherwise.
    if version != 7 or bits_per_pixel not in (24, 32):
        sys.exit(f"xwd_to_png: {src}: version {version}, {bits_per_pixel} bits per pixel; only 7 and 24 or 32 are read")
    pixels = data[header_size + 12 * ncolors:]
    order = "<" if byte_order == 0 else ">"
    step = bits_per_pixel // 8
    rows = []
    for y in range(height):
        line = pixels[y * bytes_per_line:y * bytes_per_line + step * width]
        if step == 4:
            values = struct.unpack(f"{order}{width}I", line)
        else:
            values = [int.from_bytes(line[i:i + 3], "little" if byte_order == 0 else "big") for i in range(0, 3 * width, 3)]
        row = bytearray()
        for v in values:
            row += bytes((channel(v, red_mask), channel(v, green_mask), channel(v, blue_mask)))
        rows.append(bytes(row))
    return width, height, rows


def convert(src, dst):
    width, height, pixel_rows = read_xwd(src)
    rows = [b"\0" + row for row in pixel_rows]  # PNG filter: none

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(b"".join(rows), 6)) + chunk(b"IEND", b"")
    open(dst, "wb").write(png)


if __name__ == "__main__":
    convert(sys.argv[1], sys.argv[2])
