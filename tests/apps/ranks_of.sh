# Sourced by the app scripts that kill MPI ranks of a launcher they started in the background.
ranks_of() {  # PID: the cosmoflow processes below PID (the MPI ranks)
  local p
  for p in $(pgrep -P "$1"); do
    [[ "$(cat "/proc/$p/comm" 2> /dev/null)" == cosmoflow ]] && echo "$p"
    ranks_of "$p"
  done
}
