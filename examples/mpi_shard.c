/* Many machines: each MPI rank opens its own loader with loader.rank and
 * loader.world_size taken from MPI, and reads its share of every epoch.
 * sluice does not talk MPI itself; it only needs rank and world size.
 *
 *   mpirun -np 2 mpi_shard DATASET [--order ORDER] [--epochs N]
 *          [--batch B] [--drop-last]
 *
 * To check the sharding, every rank sends the sample indices it got to
 * rank 0, which verifies per epoch that the ranks' samples are disjoint
 * (padding repeats aside), that together they cover the dataset (or, with
 * --drop-last, that only whole batches came) and that every rank got the
 * same number of batches. Exit status 0 when all holds. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice.h>

static int set(sl_config *cfg, const char *key, const char *value) {
  if (sl_config_set(cfg, key, value) == SL_OK)
    return 0;
  fprintf(stderr, "%s\n", sl_config_errmsg(cfg));
  return 1;
}

/* Rank 0: checks one epoch's gathered indices. */
static int check_epoch(int epoch, const uint64_t *all, const int *counts,
                       int world, uint64_t n, int batch, int drop_last) {
  int bad = 0;
  for (int r = 1; r < world; r++)
    if (counts[r] != counts[0]) {
      fprintf(stderr, "epoch %d: rank %d got %d samples, rank 0 %d\n", epoch, r,
              counts[r], counts[0]);
      bad = 1;
    }
  if (counts[0] % batch != 0) {
    fprintf(stderr, "epoch %d: %d samples is not whole batches\n", epoch,
            counts[0]);
    bad = 1;
  }
  unsigned *seen = calloc(n, sizeof *seen);
  uint64_t total = 0, covered = 0, repeats = 0;
  for (int r = 0; r < world; r++)
    for (int i = 0; i < counts[r]; i++, total++) {
      uint64_t idx = all[total];
      if (idx >= n) {
        fprintf(stderr, "epoch %d: index %llu out of range\n", epoch,
                (unsigned long long)idx);
        bad = 1;
        continue;
      }
      if (seen[idx]++)
        repeats++;
      else
        covered++;
    }
  uint64_t padding = total > n ? total - n : 0;
  if (drop_last ? repeats != 0 : (covered != n || repeats != padding)) {
    fprintf(stderr,
            "epoch %d: %llu samples delivered, %llu distinct of %llu, "
            "%llu repeats (padding allows %llu)\n",
            epoch, (unsigned long long)total, (unsigned long long)covered,
            (unsigned long long)n, (unsigned long long)repeats,
            (unsigned long long)(drop_last ? 0 : padding));
    bad = 1;
  }
  printf("epoch %d: %d ranks x %d samples, %llu distinct of %llu, %llu "
         "padding repeats: %s\n",
         epoch, world, counts[0], (unsigned long long)covered,
         (unsigned long long)n, (unsigned long long)repeats,
         bad ? "FAILED" : "ok");
  free(seen);
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, world;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (argc < 2) {
    if (rank == 0)
      fprintf(stderr,
              "usage: mpirun -np N %s DATASET [--order ORDER] "
              "[--epochs N] [--batch B] [--drop-last]\n",
              argv[0]);
    MPI_Finalize();
    return 2;
  }
  const char *order = "quasi_random", *batch = "4";
  int epochs = 2, drop_last = 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--order") == 0 && i + 1 < argc)
      order = argv[++i];
    else if (strcmp(argv[i], "--epochs") == 0 && i + 1 < argc)
      epochs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
      batch = argv[++i];
    else if (strcmp(argv[i], "--drop-last") == 0)
      drop_last = 1;
  }
  char srank[16], sworld[16];
  snprintf(srank, sizeof srank, "%d", rank);
  snprintf(sworld, sizeof sworld, "%d", world);
  sl_config *cfg;
  int err = sl_config_create(&cfg) != SL_OK;
  err =
      err || set(cfg, "dataset.path", argv[1]) ||
      set(cfg, "loader.rank", srank) || set(cfg, "loader.world_size", sworld) ||
      set(cfg, "loader.order", order) || set(cfg, "loader.batch_size", batch) ||
      set(cfg, "loader.drop_last", drop_last ? "true" : "false") ||
      set(cfg, "loader.workers", "1") || set(cfg, "device.backend", "host") ||
      set(cfg, "resolution.min", "32") || set(cfg, "resolution.max", "32") ||
      set(cfg, "augment.dtype", "u8");
  sl_loader *ld = NULL;
  if (!err && sl_loader_open(&ld, cfg) != SL_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, sl_loader_errmsg(ld));
    err = 1;
  }
  sl_config_destroy(cfg);
  int any_err = 0;
  MPI_Allreduce(&err, &any_err, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_err) {
    sl_loader_close(ld);
    MPI_Finalize();
    return 1;
  }
  uint64_t n = sl_loader_sample_count(ld);
  int per_rank = (int)(sl_loader_batches_per_epoch(ld) * (uint64_t)atoi(batch));
  uint64_t *mine = malloc((size_t)per_rank * sizeof *mine + 1);
  uint64_t *all =
      rank == 0 ? malloc((size_t)per_rank * world * sizeof *all * 2 + 1) : NULL;
  int *counts = rank == 0 ? calloc((size_t)world, sizeof *counts) : NULL;
  int *displs = rank == 0 ? calloc((size_t)world, sizeof *displs) : NULL;
  int failed = 0;
  for (int e = 0; e < epochs; e++) {
    int got = 0;
    sl_batch b;
    sl_status st;
    sl_loader_start_epoch(ld, (uint64_t)e);
    while ((st = sl_loader_next(ld, &b)) == SL_OK) {
      for (uint32_t j = 0; j < b.n && got < per_rank; j++)
        mine[got++] = b.indices[j];
      sl_batch_release(ld, &b, NULL);
    }
    if (st != SL_END) {
      fprintf(stderr, "rank %d epoch %d: %s\n", rank, e, sl_loader_errmsg(ld));
      failed = 1;
    }
    MPI_Gather(&got, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
      for (int r = 1; r < world; r++)
        displs[r] = displs[r - 1] + counts[r - 1];
    MPI_Gatherv(mine, got, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0,
                MPI_COMM_WORLD);
    if (rank == 0)
      failed |= check_epoch(e, all, counts, world, n, atoi(batch), drop_last);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(mine);
  free(all);
  free(counts);
  free(displs);
  sl_loader_close(ld);
  MPI_Finalize();
  return failed;
}
