// Declares nothing: `import os.signpost` finds this submodule, and the Swift overlay `os` holds the API.
