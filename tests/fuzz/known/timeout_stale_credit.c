/* Reproducer (not built by CI): after a launch that a wait timeout aborted
 * inside a builtin (one rank late by 30-90 ms, wait timeout 50 ms), the next
 * launch of a correct kernel fails with PLD_ERR_ARG "the signal holds credits
 * of an earlier call" (46 of 60 iterations at P = 4 on the thread transport).
 * See docs/dev/fuzzing.md, "Open bugs the harness found".
 * Build: cc -I include tests/fuzz/known/timeout_stale_credit.c build/src/libpld.a -lpthread -lm */
#define _DEFAULT_SOURCE
#include <pld/pld.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pld_dtensor sig, data;
static int slow_rank = -1, slow_us = 0;
static void k(pld_ctx *c, void *a){(void)a; int me=pld_rank(c);
  if (me == slow_rank) usleep(slow_us);
  pld_barrier(c, sig);
  pld_allreduce(c, data, sig, PLD_SUM, PLD_MESH);
  pld_barrier(c, sig);}
int main(int argc, char **argv){
  pld_world *w; pld_config cfg={.devices="0-3",.wait_timeout_ms=50};
  if (pld_world_init(&w,&cfg)) return 2;
  pld_window_buffer *b; pld_alloc_window_buffer(w,16,"sig",&b); pld_window(b,PLD_INT32,2,PLD_IDX(4,1),&sig);
  pld_alloc_window_buffer(w,16,"data",&b); pld_window(b,PLD_INT32,2,PLD_IDX(1,4),&data);
  int N = argc > 1 ? atoi(argv[1]) : 50, bad = 0;
  for (int i = 0; i < N; i++) {
    slow_rank = i % 4; slow_us = 30000 + (i * 7919) % 60000;
    pld_status st = pld_launch(w,k,0);
    slow_rank = -1;
    pld_status st2 = pld_launch(w,k,0);
    if (st2) { bad++; if (bad < 4) fprintf(stderr, "iter %d: first %s: %s\n  then %s: %s\n", i, pld_status_name(st), "", pld_status_name(st2), pld_world_error(w)); }
  }
  fprintf(stderr, "%d/%d clean launches after a timed-out one failed\n", bad, N);
  pld_world_finalize(w);
}
