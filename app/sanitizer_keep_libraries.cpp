// Sanitized builds only (RINGLAB_SANITIZE): libraries are never unloaded.
//
// LeakSanitizer looks for unreachable memory when the process exits. A library unloaded with
// dlclose() before that (Mesa unloads its GL driver at glfwTerminate, OpenMPI unloads its
// components at MPI_Finalize) takes with it the globals that still pointed at its allocations
// and the symbols of its stack frames, so what it kept on purpose is reported as a leak "in
// <unknown module>" that no suppression can name. Defining dlclose() in the executable
// interposes it for every library in the process; with everything kept loaded, those
// allocations stay reachable and a real leak in ringlab's own code is still reported.
#ifdef RINGLAB_SANITIZED
extern "C" int dlclose(void* handle) {
  (void)handle;
  return 0;
}
#endif
