"""The Streamlit dashboard's shared code (widgets, state, background jobs); the engine is `tempo_eval`."""
