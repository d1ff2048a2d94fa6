"""The wire format (codec) and the agent's end of it (sdk)."""
