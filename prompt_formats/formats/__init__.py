"""One module per format; ``chatml`` holds the ChatML rules the two ChatML formats share."""
