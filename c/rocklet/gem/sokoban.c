/* sokoban.c: game:Sokoban-v0-{easy,hard,random}, GEM's rules and texts.
 * A room is made from the seed: a topology carved by a random walk inside
 * the border walls, targets and the player placed on its floor with every
 * box on its target (the solved state), then played backwards (the player
 * walks and pulls boxes) for at most 3/4 of max_turns steps; of 64 such
 * plays the one that moves the most boxes furthest is kept. Reversed, that
 * play is a solution within max_turns, so every room is solvable in its
 * budget and none starts deadlocked. */
#include <stdlib.h>
#include <string.h>

#include "gem.h"

enum { WALL = '#', FLOOR = '_' };
#define MAXD 8

typedef struct {
  gem_env e;
  int variant;
  int h, w, nbox, max_turns;
  char wall[MAXD][MAXD];   /* WALL or FLOOR */
  char target[MAXD][MAXD]; /* 1 on a target */
  char box[MAXD][MAXD];    /* 1 holds a box */
  int pr, pc, turn;
  char *suffix;
} soko_t;

static const int DR[4] = {-1, 1, 0, 0}, DC[4] = {0, 0, -1, 1};
static const char *const DNAME[4] = {"up", "down", "left", "right"};

static int on_target(const soko_t *s) {
  int n = 0;
  for (int r = 0; r < s->h; r++)
    for (int c = 0; c < s->w; c++) n += s->box[r][c] && s->target[r][c];
  return n;
}

static char *board(const soko_t *s) {
  size_t cap = (size_t)s->h * ((size_t)s->w * 4 + 1) + 1, o = 0;
  char *b = malloc(cap);
  for (int r = 0; r < s->h; r++) {
    for (int c = 0; c < s->w; c++) {
      const char *cell = s->wall[r][c] == WALL                ? "#"
                         : r == s->pr && c == s->pc           ? "P"
                         : s->box[r][c] && s->target[r][c]    ? "\xe2\x88\x9a" /* √ */
                         : s->box[r][c]                       ? "X"
                         : s->target[r][c]                    ? "O"
                                                              : "_";
      size_t n = strlen(cell);
      memcpy(b + o, cell, n);
      o += n;
      b[o++] = c + 1 < s->w ? ' ' : '\n'; /* GEM: every row ends with a newline */
    }
  }
  b[o] = 0;
  return b;
}

static void set_suffix(soko_t *s) {
  free(s->suffix);
  char *b = board(s);
  s->suffix = gem_fmt("Here is the current board layout:\n%s\nEnter your move.", b);
  free(b);
  s->e.suffix = s->suffix;
}

/* Carve the floor: a random walk from an inner cell until 60% is floor. */
static void carve(soko_t *s, gem_rng *rng) {
  memset(s->wall, WALL, sizeof s->wall);
  int inner = (s->h - 2) * (s->w - 2), want = inner * 3 / 5, have = 0;
  int r = gem_rng_int(rng, 1, s->h - 2), c = gem_rng_int(rng, 1, s->w - 2), d = 0;
  while (have < want) {
    if (s->wall[r][c] == WALL) s->wall[r][c] = FLOOR, have++;
    if (gem_rng_int(rng, 0, 99) < 35) d = gem_rng_int(rng, 0, 3);
    int nr = r + DR[d], nc = c + DC[d];
    if (nr >= 1 && nr <= s->h - 2 && nc >= 1 && nc <= s->w - 2) r = nr, c = nc;
    else d = gem_rng_int(rng, 0, 3);
  }
}

/* A random floor cell without a target or a box, or the player. */
static int free_cell(soko_t *s, gem_rng *rng, int *rr, int *cc) {
  int cells[MAXD * MAXD], n = 0;
  for (int r = 0; r < s->h; r++)
    for (int c = 0; c < s->w; c++)
      if (s->wall[r][c] == FLOOR && !s->target[r][c] && !(r == s->pr && c == s->pc))
        cells[n++] = r * MAXD + c;
  if (!n) return 0;
  int k = cells[gem_rng_int(rng, 0, n - 1)];
  *rr = k / MAXD, *cc = k % MAXD;
  return 1;
}

/* One backward play of at most len steps from the solved state in *s;
 * returns its score: boxes off target first, then their distance moved. */
static int play_back(soko_t *s, gem_rng *rng, int len) {
  int moved[MAXD][MAXD] = {{0}};
  for (int i = 0; i < len; i++) {
    int d = gem_rng_int(rng, 0, 3);
    int nr = s->pr + DR[d], nc = s->pc + DC[d];
    if (s->wall[nr][nc] == WALL || s->box[nr][nc]) continue;
    int br = s->pr - DR[d], bc = s->pc - DC[d]; /* the box behind comes along */
    if (s->box[br][bc] && gem_rng_int(rng, 0, 99) < 80) {
      s->box[br][bc] = 0;
      s->box[s->pr][s->pc] = 1;
      moved[s->pr][s->pc] = moved[br][bc] + 1;
      moved[br][bc] = 0;
    }
    s->pr = nr, s->pc = nc;
  }
  int score = (s->nbox - on_target(s)) * 1000;
  for (int r = 0; r < s->h; r++)
    for (int c = 0; c < s->w; c++)
      if (s->box[r][c] && !s->target[r][c]) score += moved[r][c];
  return s->nbox - on_target(s) ? score : 0;
}

static void generate(soko_t *s, gem_rng *rng) {
  for (;;) {
    carve(s, rng);
    memset(s->target, 0, sizeof s->target);
    memset(s->box, 0, sizeof s->box);
    s->pr = s->pc = 0;
    int ok = 1, r, c;
    for (int b = 0; b < s->nbox && ok; b++)
      if ((ok = free_cell(s, rng, &r, &c))) s->target[r][c] = s->box[r][c] = 1;
    if (!ok || !free_cell(s, rng, &s->pr, &s->pc)) continue;
    soko_t best = *s, solved = *s;
    int best_score = 0;
    for (int k = 0; k < 64; k++) {
      soko_t t = solved;
      int sc = play_back(&t, rng, s->max_turns * 3 / 4);
      if (sc > best_score) best_score = sc, best = t;
    }
    if (!best_score) continue; /* no play moved a box: another topology */
    memcpy(s->box, best.box, sizeof s->box);
    s->pr = best.pr, s->pc = best.pc;
    return;
  }
}

static char *soko_reset(gem_env *e, gem_rng *rng) {
  soko_t *s = (soko_t *)e;
  if (s->variant == 2) {
    int big = gem_rng_int(rng, 0, 1);
    s->h = s->w = big ? 8 : 6, s->nbox = big ? 5 : 2, s->max_turns = big ? 50 : 20;
  }
  generate(s, rng);
  s->turn = 0;
  set_suffix(s);
  const char *example = DNAME[gem_rng_int(rng, 0, 3)]; /* GEM's sample_random_action */
  return gem_fmt(
      "You are solving the Sokoban puzzle. You are the player and you need to push all boxes "
      "to targets.\n"
      "When you are right next to a box, you can push it by moving in the same direction.\n"
      "You cannot push a box through a wall or another box, and you cannot pull a box.\n"
      "you have to complete the puzzle within %d turns.\n"
      "On the board, objects are represented as:\n"
      "- The player (you) appears as 'P'\n"
      "- Walls are represented with '#'\n"
      "- Boxes are marked as 'X'\n"
      "- Empty goals are shown with 'O'\n"
      "- Boxes on goals are visualized with '\xe2\x88\x9a'\n"
      "- Empty floor is shown as '_'\n\n"
      "To submit your move, type the command in \\boxed{}.\n"
      "For example: \\boxed{%s} to move %s.\n"
      "Use logic and deduction to push all boxes onto the target positions!",
      s->max_turns, example, example);
}

static int direction(const char *t, size_t n) {
  for (int d = 0; d < 4; d++)
    if (strlen(DNAME[d]) == n && !strncasecmp(t, DNAME[d], n)) return 1;
  return 0;
}

static void soko_step(gem_env *e, const char *action, gem_step_t *o) {
  soko_t *s = (soko_t *)e;
  char word[8];
  s->turn++;
  o->reward = 0;
  o->terminated = o->truncated = 0;
  if (!gem_last_boxed(action, direction, word, sizeof word)) {
    o->observation = gem_fmt("At turn %d, your submitted action is not valid.", s->turn);
    o->reward = GEM_R_FORMAT_ERROR;
    o->terminated = 1;
    o->truncated = s->turn == s->max_turns;
    return;
  }
  int d = 0;
  while (strcasecmp(word, DNAME[d])) d++;
  int nr = s->pr + DR[d], nc = s->pc + DC[d], br = nr + DR[d], bc = nc + DC[d];
  int pushed = 0;
  if (s->wall[nr][nc] == WALL ||
      (s->box[nr][nc] && (s->wall[br][bc] == WALL || s->box[br][bc]))) {
    o->observation = gem_fmt(
        "At turn %d, you cannot move %s - you would collide with wall or other boxes!", s->turn,
        DNAME[d]);
  } else {
    if (s->box[nr][nc]) s->box[nr][nc] = 0, s->box[br][bc] = 1, pushed = 1;
    s->pr = nr, s->pc = nc;
    o->observation = pushed ? gem_fmt("At turn %d, you pushed a box while you moved %s.",
                                      s->turn, DNAME[d])
                            : gem_fmt("At turn %d, you moved %s.", s->turn, DNAME[d]);
  }
  set_suffix(s);
  int done = on_target(s);
  if (done == s->nbox) {
    free(o->observation);
    o->observation = gem_fmt("Congratulations! You have solved the Sokoban puzzle!");
    o->reward = GEM_R_SUCCESS;
    o->terminated = 1;
  } else if (s->turn >= s->max_turns) {
    free(o->observation);
    o->observation = gem_fmt("You have reached the maximum number of turns.");
    o->terminated = o->truncated = 1;
    o->reward = (double)done / s->nbox;
  }
}

static void soko_free(gem_env *e) {
  free(((soko_t *)e)->suffix);
  free(e);
}

gem_env *gem_sokoban_make(int variant) {
  soko_t *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->e.suffix = "";
  s->e.reset = soko_reset;
  s->e.step = soko_step;
  s->e.free = soko_free;
  s->variant = variant;
  int hard = variant == 1;
  s->h = s->w = hard ? 8 : 6, s->nbox = hard ? 4 : 2, s->max_turns = hard ? 50 : 20;
  return &s->e;
}
