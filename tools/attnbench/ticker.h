/* Progress for long single calls that cannot report their own (the CPU
 * reference of --check: one library call, 9 s for a default-size layer on
 * lavapipe): a thread prints "attnbench: WHAT: 3 s so far" on stderr while
 * the call runs, never on stdout (--json keeps one value there). Quiet for
 * the first 2 s; then every second on a terminal, every 10 s otherwise (a
 * log gets a few lines, not one a second); a closing "WHAT: done in 9.3 s"
 * only if it spoke. $ATTNBENCH_PROGRESS_AFTER (seconds, digits and a point)
 * moves the first line, for tests. */
#ifndef ATTNBENCH_TICKER_H
#define ATTNBENCH_TICKER_H

typedef struct ab_ticker ab_ticker;

/* Starts ticking for `what` (copied). NULL when no thread could be made:
 * the call then runs silently, as before. */
ab_ticker *ab_ticker_start(const char *what);
/* Stops and joins the thread; NULL is fine. */
void ab_ticker_stop(ab_ticker *t);

#endif
