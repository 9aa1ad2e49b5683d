import json
import sys

print(json.dumps({"argv": sys.argv[1:]}))
