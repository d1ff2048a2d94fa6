"""Agent folders and the processes they run in: manifests, builds, processes, pools, sandbox."""
