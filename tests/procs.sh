# Process and port helpers shared by tests/lib.sh and tests/trainer/lib.sh (both source
# this; a test sources one of them, not this file).

# A TCP port on 127.0.0.1 free at the time of asking (the kernel's pick).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Which of two background processes exits first, within 30 s: prints NAME_A or NAME_B,
# nothing when both still run (two claimants of one rank: the loser is refused at once).
first_to_exit() {  # PID_A NAME_A PID_B NAME_B
  for _ in $(seq 600); do
    kill -0 "$1" 2>/dev/null || { echo "$2"; return; }
    kill -0 "$3" 2>/dev/null || { echo "$4"; return; }
    sleep 0.05
  done
}
