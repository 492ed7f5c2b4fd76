"""JSON text exactly as the templates write it, and walks of values without recursion."""
