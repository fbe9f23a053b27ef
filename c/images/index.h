/* index.h: the image cache's LRU index, one JSON file (index.json) in the
 * cache dir, shared by every host on the machine under an flock.
 * An entry per image rock has used: when it was last used, its size in the
 * engine, and its tar file in the cache dir (`docker save` format) if any.
 * The index only records and plans; the engine calls and the choice of
 * when to evict are lua/rock/images.lua's. */
#ifndef ROCK_IMAGES_INDEX_H
#define ROCK_IMAGES_INDEX_H

#include <jansson.h>
#include <stddef.h>

#include "../core/err.h"

/* The tar file of image in dir: dir/<image with / and : escaped>.tar.
 * Returns the length written (truncated output if >= cap). */
int rock_images_tar_path(char *buf, size_t cap, const char *dir, const char *image);

/* Record a use of image now. engine_size/tar_size: bytes, or -1 to leave
 * the recorded value as it is (0 means "not there"). */
rock_err rock_images_touch(const char *dir, const char *image, double engine_size,
                           double tar_size, const char **why);
/* Drop image from the index. */
rock_err rock_images_forget(const char *dir, const char *image, const char **why);
/* The index: {image: {last_used=, engine_size=, tar_size=}}; new ref. */
rock_err rock_images_read(const char *dir, json_t **out, const char **why);
/* Images to evict, least recently used first, until the sizes left fit in
 * budget bytes; the images in keep (NULL-terminated, may be NULL) are never
 * chosen. Returns a new JSON array of names. */
rock_err rock_images_plan(const char *dir, double budget,
                          const char *const *keep, json_t **out, const char **why);

#endif
