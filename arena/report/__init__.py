"""What people read: the HTML report and its charts, live progress and the event log."""
