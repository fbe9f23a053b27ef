"""iolib: small path helpers (a requests-style repo for rock's tests)."""


def stem(path):
    name = path.rsplit("/", 1)[-1]
    return name.split(".")[0]


def join(*parts):
    return "-".join(parts)
