// Declares nothing: `import os.activity` finds this submodule, and the Swift overlay `os` holds the API.
