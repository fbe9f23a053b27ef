/* gem.h: rock's shipped GEM environments, native, run as
 *   rocklet gem ENV_ID
 * a process environment speaking the JSON-lines protocol of
 * docs/environments.md on stdin/stdout (main.c). Each game is a file:
 * guess.c (game:GuessTheNumber-v0-*), sokoban.c (game:Sokoban-v0-*), with
 * GEM's texts, rewards and termination rules. Randomness is gem_rng
 * (splitmix64), so an episode is a function of its seed. */
#ifndef ROCK_ROCKLET_GEM_H
#define ROCK_ROCKLET_GEM_H

#include <jansson.h>
#include <stdint.h>

/* GEM's LanguageGameReward */
#define GEM_R_SUCCESS 1.0
#define GEM_R_FORMAT_ERROR -0.1

typedef struct { uint64_t s; } gem_rng;
static inline uint64_t gem_rng_next(gem_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/* uniform in [lo, hi] */
static inline int gem_rng_int(gem_rng *r, int lo, int hi) {
  return lo + (int)(gem_rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* One environment: reset fills obs (malloc'd text); step fills the result. */
typedef struct gem_env gem_env;
typedef struct {
  char *observation; /* malloc'd */
  double reward;
  int terminated, truncated;
} gem_step_t;
struct gem_env {
  const char *suffix; /* info.suffix: static or owned by the env */
  char *(*reset)(gem_env *e, gem_rng *rng);
  void (*step)(gem_env *e, const char *action, gem_step_t *out);
  void (*free)(gem_env *e);
};

/* The registered ids, NULL-terminated; gem_make returns NULL for another. */
extern const char *const gem_env_ids[];
gem_env *gem_make(const char *env_id);
int gem_make_known(const char *env_id);
gem_env *gem_guess_make(int variant);   /* 0 easy, 1 hard, 2 random */
gem_env *gem_sokoban_make(int variant); /* 0 easy, 1 hard, 2 random */

/* The text inside the last \boxed{...} whose content ok() accepts, copied
 * into out (cap bytes); 1 if one was found. */
int gem_last_boxed(const char *action, int (*ok)(const char *s, size_t n), char *out,
                   size_t cap);
/* printf into a fresh malloc'd string */
char *gem_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int gem_main(int argc, char **argv);

#endif
