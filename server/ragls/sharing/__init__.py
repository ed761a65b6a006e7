"""A folder's index as every process sees it: the index API, the local index, the owner lock and socket, editor buffers."""
