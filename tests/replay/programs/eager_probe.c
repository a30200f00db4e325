/* Which message sizes Open MPI sends eagerly: rank 0 times a blocking MPI_Send of each
 * size given on the command line while rank 1 waits SLEEP_US before posting the receive.
 * An eager send returns once the data is handed to the transport; a rendezvous send waits
 * for the receiver's answer, so it takes the receiver's pause. Prints "SIZE SECONDS". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLEEP_US 1000000

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int a = 1; a < argc; a++) {
        int n = atoi(argv[a]);
        char *buf = calloc(n > 0 ? n : 1, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            double t = MPI_Wtime();
            MPI_Send(buf, n, MPI_BYTE, 1, a, MPI_COMM_WORLD);
            printf("%d %.6f\n", n, MPI_Wtime() - t);
            fflush(stdout);
        } else if (rank == 1) {
            usleep(SLEEP_US);
            MPI_Recv(buf, n, MPI_BYTE, 0, a, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        free(buf);
    }
    MPI_Finalize();
    return 0;
}
