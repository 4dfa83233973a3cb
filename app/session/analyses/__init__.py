"""The analysis windows' features: each module registers its own (``@feature``,
``mjrig.session.feature``), and the session makes one of each (``feature.analyses``)."""
