"""The store on PostgreSQL: a hub that several processes serve at once (psycopg 3, pooled).

Imported only when a ``postgresql://`` URL is opened, so that SQLite users never load psycopg.
"""
