# SPDX-License-Identifier: Apache-2.0
# pld_add_mpi_test(<test> <np> <target> [args...])
#   Runs <target> under the MPI launcher with <np> processes (oversubscribed:
#   these machines have fewer cores than ranks) as ctest test <test>, label
#   "mpi". The environment (PLD_MPI_TEST_ENV, for tests added otherwise)
#   lets the launcher run as root in a container and keeps Open MPI on its
#   shared-memory paths (no network, no ptrace-based single copy).
#   LeakSanitizer is off: Open MPI keeps memory until exit in components it
#   dlcloses at MPI_Finalize, which no suppression file can name (the same
#   pld code is leak-checked on the thread and process transports).
set(PLD_MPI_TEST_ENV
    "OMPI_ALLOW_RUN_AS_ROOT=set:1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=set:1;OMPI_MCA_btl=set:self,vader;OMPI_MCA_pml=set:ob1;OMPI_MCA_btl_vader_single_copy_mechanism=set:none;ASAN_OPTIONS=set:detect_leaks=0")

# A run passes when the root process printed "OK" on a line of its own: the
# launcher may add its own lines (warnings about the host, say) around it.
set(PLD_MPI_PASS_OK "(^|\n)OK\n")

function(pld_add_mpi_test test np target)
  add_test(NAME ${test}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe
                   ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${target}> ${ARGN} ${MPIEXEC_POSTFLAGS})
  # A pass regex makes ctest ignore the exit status: the launcher's own
  # report of a failed or killed process (and a sanitizer's) fails the test.
  set_tests_properties(${test} PROPERTIES
    FAIL_REGULAR_EXPRESSION "non-zero (exit code|status)|exited on signal|Sanitizer|runtime error"
    LABELS mpi
    TIMEOUT 120
    ENVIRONMENT_MODIFICATION
    "${PLD_MPI_TEST_ENV};PLD_DEBUG=unset:;PLD_IR=unset:;PLD_TRACE=unset:;PLD_UB_BYTES=unset:;PLD_WAIT_TIMEOUT_MS=unset:")
endfunction()
