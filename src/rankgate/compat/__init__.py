"""Drop-ins for other tools' interfaces: trec_eval's command line and output, pytrec_eval's API.

Each module speaks one peer's conventions on top of rankgate's own evaluation, so a script that
used the peer switches by changing an import or a program name.
"""
