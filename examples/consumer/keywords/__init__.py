"""The consumer example's keyword-spotting model."""
