// Declares nothing: `import os.lock` finds this submodule, and the Swift overlay `os` holds the API.
