"""The scoring page (`aoven-git score`): what it shows (`content`) and how it is served (`server`)."""
