// Declares nothing: `import os.log` finds this submodule, and the Swift overlay `os` holds the API.
