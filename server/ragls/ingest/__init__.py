"""From a folder to prepared files: discovery, ignore rules, secrets, preparation, watching, seeking asked-for files."""
