/* guess.c: game:GuessTheNumber-v0-{easy,hard,random}, GEM's rules and
 * texts: a target drawn in [min, max] at reset, hints 'higher'/'lower',
 * the last \boxed{N} is the guess (any number of digits, printed as
 * Python's int() prints it: no leading zeros, never clamped); no number,
 * or 0, is a format error (-0.1, terminated); max_turns ends it truncated
 * with the soft reward 1 - |G - T| / (max - min). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gem.h"

typedef struct {
  gem_env e;
  int variant;
  int min, max, max_turns;
  int target, turn;
  unsigned char *guessed; /* max - min + 1 flags */
} guess_t;

static int digits(const char *s, size_t n) {
  if (!n) return 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return 0;
  return 1;
}

static char *guess_reset(gem_env *e, gem_rng *rng) {
  guess_t *g = (guess_t *)e;
  if (g->variant == 2) {
    g->min = gem_rng_int(rng, 1, 10);
    g->max = gem_rng_int(rng, g->min + 5, g->min + 50);
    g->max_turns = (int)ceil(sqrt((double)(g->max - g->min))) + 1;
  }
  g->target = gem_rng_int(rng, g->min, g->max);
  g->turn = 0;
  free(g->guessed);
  g->guessed = calloc((size_t)(g->max - g->min + 1), 1);
  int example = gem_rng_int(rng, g->min, g->max); /* GEM's sample_random_action */
  return gem_fmt(
      "You are playing Guess The Number.\n"
      "You have to guess the number between %d and %d (inclusive) within %d turns.\n"
      "As you enter your guess, the game will provide you with hints such as the target number "
      "is 'higher' or 'lower'.\n"
      "You may provide your response in any manner. Only the number that is wrapped inside "
      "\\boxed{} will be considered as your guess, for example, \\boxed{%d}.\n"
      "As you play, the history of your guesses will be appended below. Use the information "
      "to complete the game before you run out of guesses.\n"
      "Enter your first guess to start the game.\n",
      g->min, g->max, g->max_turns, example);
}

static void guess_step(gem_env *e, const char *action, gem_step_t *o) {
  guess_t *g = (guess_t *)e;
  size_t cap = strlen(action) + 1; /* the guess may be as long as the action */
  char *num = malloc(cap);
  if (!num) abort();
  g->turn++;
  const char *N = "0"; /* the guess's digits as int() prints them */
  if (gem_last_boxed(action, digits, num, cap)) {
    N = num;
    while (N[0] == '0' && N[1]) N++; /* int("007") == 7 */
  }
  long long G = strlen(N) > 12 ? -1 : atoll(N); /* -1: past any range */
  o->terminated = o->truncated = 0;
  o->reward = 0;
  if (G == 0) { /* GEM: `if not player_guess` */
    free(num);
    o->observation = gem_fmt("At turn %d, you did not provide a valid guess.", g->turn);
    o->reward = GEM_R_FORMAT_ERROR;
    o->terminated = 1;
    o->truncated = g->turn == g->max_turns;
    return;
  }
  int in_range = G >= g->min && G <= g->max;
  if (!in_range) {
    o->observation = gem_fmt("At turn %d, you guessed %s, which is outside the range specified.",
                             g->turn, N);
  } else if (g->guessed[G - g->min]) {
    o->observation = gem_fmt(
        "At turn %d, you guessed %lld, which has been already guessed before.", g->turn, G);
  } else {
    g->guessed[G - g->min] = 1;
    if (G == g->target) {
      o->observation = gem_fmt("Congratulations! You guessed the correct number %d in %d turns.",
                               g->target, g->turn);
      o->reward = GEM_R_SUCCESS;
      o->terminated = 1;
      free(num);
      return;
    }
    o->observation =
        gem_fmt("At turn %d, you guessed %lld, and the target number is %s than %lld.", g->turn, G,
                g->target > G ? "higher" : "lower", G);
  }
  free(num);
  if (g->turn >= g->max_turns) {
    free(o->observation);
    o->observation = gem_fmt("You have reached the maximum number of turns.");
    o->terminated = o->truncated = 1;
    o->reward = in_range ? 1.0 - fabs((double)(G - g->target)) / (double)(g->max - g->min) : 0;
  }
}

static void guess_free(gem_env *e) {
  free(((guess_t *)e)->guessed);
  free(e);
}

gem_env *gem_guess_make(int variant) {
  static const int kw[2][3] = {{1, 10, 4}, {1, 50, 7}};
  guess_t *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->e.suffix = "Enter your next guess.";
  g->e.reset = guess_reset;
  g->e.step = guess_step;
  g->e.free = guess_free;
  g->variant = variant;
  int k = variant == 1 ? 1 : 0; /* random sets its own at each reset */
  g->min = kw[k][0], g->max = kw[k][1], g->max_turns = kw[k][2];
  return &g->e;
}
