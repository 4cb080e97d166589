"""Writes the zoo's test images, 16x16 binary PPMs: a gradient and seeded noise. Run from the
repository root: python3 models/vlm/make_images.py (generated_files_test checks its output)."""

import os
import random

SIZE = 16


def gradient():
    return bytes(v for y in range(SIZE) for x in range(SIZE) for v in (x * 16, y * 16, 255 - x * 8 - y * 8))


def noise():
    draw = random.Random(45)
    return bytes(draw.randrange(256) for _ in range(SIZE * SIZE * 3))


def ppm(pixels):
    return b"P6\n%d %d\n255\n" % (SIZE, SIZE) + pixels


IMAGES = {"gradient.ppm": gradient, "noise.ppm": noise}


def main(folder=os.path.join("models", "vlm", "images")):
    os.makedirs(folder, exist_ok=True)
    for name, pixels in IMAGES.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(ppm(pixels()))


if __name__ == "__main__":
    main()
